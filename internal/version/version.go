// Package version holds the agenthub version, recorded in cassette metadata
// and reports.
package version

// Version is the agenthub release this tree builds.
const Version = "0.1.0"
