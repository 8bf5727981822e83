package tools_test

import (
	"fmt"

	"github.com/agenthub/agenthub/agent/tools"
)

func ExampleParseScalingInput() {
	for _, in := range []string{
		"./picture/window.jpg 256",
		"my pics/sea side.jpg 128",
		`{"path":"picture/door.png","width":"64"}`,
		"picture/window.jpg",
	} {
		got, err := tools.ParseScalingInput(in)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q %d\n", got.Path, got.Width)
	}
	// Output:
	// "./picture/window.jpg" 256
	// "my pics/sea side.jpg" 128
	// "picture/door.png" 64
	// invalid_input: image_scaling: the width is missing; expected "PATH WIDTH", for example "picture/window.jpg 256", or {"path":"picture/window.jpg","width":256}
}
