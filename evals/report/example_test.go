package report_test

import (
	"fmt"

	"github.com/agenthub/agenthub/evals/report"
)

func ExampleInShard() {
	i, n, err := report.ParseShard("2/3")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(report.InShard("a", i, n))
	// Output: true
}
