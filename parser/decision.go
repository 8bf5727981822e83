package parser

// Kind says what a reply asks the agent to do.
type Kind string

// The kinds of Decision.
const (
	// KindAction asks the agent to run one tool call.
	KindAction Kind = "action"
	// KindFinal ends the run with a final answer.
	KindFinal Kind = "final"
	// KindGiveUp ends the run because the model declined to go on.
	KindGiveUp Kind = "give_up"
	// KindToolCalls asks the agent to run every native tool call in
	// Decision.Calls, in order (DecideCalls only).
	KindToolCalls Kind = "tool_calls"
)

// Decision is what one model reply asks the agent to do.
type Decision struct {
	// Kind is the type of decision.
	Kind Kind `json:"kind"`
	// Thought is the model's reasoning before its decision (trimmed); for
	// KindToolCalls, the content the model sent beside its calls.
	Thought string `json:"thought,omitempty"`
	// Action is the tool name as the model wrote it, cleaned of decoration;
	// set when Kind is KindAction.
	Action string `json:"action,omitempty"`
	// ActionInput is the raw tool input, exactly as the tool will receive it
	// ("" for an empty input; JSON keeps its own formatting in the text
	// protocol and is compacted in the JSON protocol). It never contains an
	// Observation label line.
	ActionInput string `json:"action_input,omitempty"`
	// Calls are the native tool calls, every one the model sent, in its
	// order; set when Kind is KindToolCalls (DecideCalls). A call the agent
	// cannot run carries its Err.
	Calls []Call `json:"calls,omitempty"`
	// FinalAnswer is the answer text; set when Kind is KindFinal.
	FinalAnswer string `json:"final_answer,omitempty"`
	// GiveUp is the reason the model gave; set when Kind is KindGiveUp.
	GiveUp string `json:"reason,omitempty"`
	// ExtraActionsIgnored counts the actions after the first one, which
	// are not run (one tool call per model call).
	ExtraActionsIgnored int `json:"extra_actions_ignored,omitempty"`
	// Discarded is the text the model wrote after its own decision (for
	// example a hallucinated Observation, further actions, or prose after a
	// JSON input), trimmed; the agent never acts on it. In the JSON protocol
	// it is the text after the decision's object.
	Discarded string `json:"discarded,omitempty"`
}

// Protocol selects the reply format Parse expects.
type Protocol string

// The protocols Parse understands.
const (
	// Auto picks JSON when the trimmed reply (after unwrapping a code
	// fence) starts with '{', the text protocol otherwise.
	Auto Protocol = "auto"
	// Text is the ReAct label protocol.
	Text Protocol = "text"
	// JSON is the JSON object protocol.
	JSON Protocol = "json"
	// Tools is the providers' native tool calling: the decision comes from
	// the reply message's tool calls and content (DecideCalls), not from
	// its text, so Parse does not take it.
	Tools Protocol = "tools"
)
