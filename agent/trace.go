package agent

import "sort"

// TraceSummary condenses one run's trace for `agenthub trace report`.
type TraceSummary struct {
	// Outcome and Steps come from the done event ("" and 0 if the trace
	// has none, for example a run that crashed).
	Outcome Outcome `json:"outcome"`
	Steps   int     `json:"steps"`
	// ModelAttempts is the number of llm_call events (retries included);
	// ModelFailures counts those that failed.
	ModelAttempts int `json:"model_attempts"`
	ModelFailures int `json:"model_failures"`
	// ModelMS and ToolMS are the summed durations in milliseconds.
	ModelMS int64 `json:"model_ms"`
	ToolMS  int64 `json:"tool_ms"`
	// ParseErrors counts parse_error events.
	ParseErrors int `json:"parse_errors"`
	// Tools has one row per tool name, sorted by name.
	Tools []ToolStats `json:"tools"`
	// ErrorCodes counts every error code seen (parse, tool, model),
	// most frequent first, then by code.
	ErrorCodes []CodeCount `json:"error_codes"`
	// RecoveriesAttempted and RecoveriesSucceeded count recovery events.
	RecoveriesAttempted int `json:"recoveries_attempted"`
	RecoveriesSucceeded int `json:"recoveries_succeeded"`
	// PromptTokens and CompletionTokens are summed over llm_call events.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// ToolStats is the per-tool part of a TraceSummary.
type ToolStats struct {
	Name     string `json:"name"`
	Calls    int    `json:"calls"`
	Failures int    `json:"failures"`
	MS       int64  `json:"ms"`
}

// FailureRate is Failures / Calls (0 when there were no calls).
func (t ToolStats) FailureRate() float64 {
	if t.Calls == 0 {
		return 0
	}
	return float64(t.Failures) / float64(t.Calls)
}

// CodeCount is how often one error code occurred.
type CodeCount struct {
	Code  string `json:"code"`
	Count int    `json:"count"`
}

// SummarizeTrace computes the summary of a run's events.
func SummarizeTrace(events []Event) TraceSummary {
	var s TraceSummary
	byTool := map[string]*ToolStats{}
	codes := map[string]int{}
	for _, e := range events {
		switch e.Type {
		case EventLLMCall:
			s.ModelAttempts++
			s.ModelMS += e.MS
			s.PromptTokens += e.PromptTokens
			s.CompletionTokens += e.CompletionTokens
			if e.Error != "" {
				s.ModelFailures++
				code := e.Code
				if code == "" {
					code = "llm_error"
				}
				codes[code]++
			}
		case EventParseError:
			s.ParseErrors++
			codes[e.Code]++
		case EventToolResult:
			ts := byTool[e.Tool]
			if ts == nil {
				ts = &ToolStats{Name: e.Tool}
				byTool[e.Tool] = ts
			}
			ts.Calls++
			ts.MS += e.MS
			s.ToolMS += e.MS
			if e.Status == StatusError {
				ts.Failures++
				codes[e.Code]++
			}
		case EventRecoveryStarted:
			s.RecoveriesAttempted++
		case EventRecoveryResult:
			if e.Status == StatusSuccess {
				s.RecoveriesSucceeded++
			}
		case EventDone:
			s.Outcome, s.Steps = e.Outcome, e.Steps
		}
	}
	for _, ts := range byTool {
		s.Tools = append(s.Tools, *ts)
	}
	sort.Slice(s.Tools, func(i, j int) bool { return s.Tools[i].Name < s.Tools[j].Name })
	for c, n := range codes {
		s.ErrorCodes = append(s.ErrorCodes, CodeCount{c, n})
	}
	sort.Slice(s.ErrorCodes, func(i, j int) bool {
		if s.ErrorCodes[i].Count != s.ErrorCodes[j].Count {
			return s.ErrorCodes[i].Count > s.ErrorCodes[j].Count
		}
		return s.ErrorCodes[i].Code < s.ErrorCodes[j].Code
	})
	return s
}
