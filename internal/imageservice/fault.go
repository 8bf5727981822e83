package imageservice

// Fault is an injected image-service failure, used when recording
// scenarios that exercise the image_scaling tool's error paths. Scenario
// files embed faults under `image_faults:`; the YAML names are stable.
type Fault struct {
	// Call is the 1-based number of the /resize request to fail.
	Call int `yaml:"call" json:"call"`
	// Status is the HTTP status to answer with (for example 503).
	Status int `yaml:"status" json:"status"`
	// RetryAfterS is the Retry-After header value in seconds (0: none).
	RetryAfterS int `yaml:"retry_after_s,omitempty" json:"retry_after_s,omitempty"`
}
