// Package parser turns one model reply into a ReAct decision.
//
// Parse understands two protocols: the text protocol (Thought / Action /
// Action Input / Final Answer labels) and a JSON object protocol. It is
// pure (no I/O, no globals) and makes one forward scan over the reply, so
// time and memory are linear in the reply's length. Decision fields are
// pieces of the reply (for JSON, decoded or compacted values), so a decision
// never holds more text than its reply.
//
// DecideCalls decides over the third protocol, native tool calling: the
// content and tool calls of one decoded assistant message (see "Native tool
// calls" below). It is pure and linear too.
//
// A reply that cannot be turned into a decision gives a *Error with a stable
// Code and a Message written for the model: the agent sends it back as a
// format-correction observation, so it always shows the expected format.
//
// Render turns the result of Parse into the JSON object that
// `agenthub parse` prints and fixtures/parser/*.golden.json hold, and the
// result of DecideCalls into the one fixtures/parser-native/*.golden.json
// hold.
//
// FindLabels finds the labels of rule 1 in any text, such as a tool's
// output: the eval's injection check asks it, so that a label counts as
// injected exactly when the parser would read it as one.
//
// # Text protocol
//
// Each rule below is pinned by golden fixtures named after it
// (fixtures/parser/rNN-*.txt).
//
//  1. Labels. The labels are Thought (also Thoughts), Action, Action Input,
//     Final Answer and Observation, matched without regard to case; the two
//     words of a label may be separated by spaces, '_', '-' or nothing. The
//     colon is ASCII ':' or full-width '：', optionally preceded by spaces.
//     Markdown decoration before and around the label is skipped
//     ("**Action**:", "**Action:**", "*Action*:", "# Action:", "- Action:",
//     "> Action:", "1. Action:"), as is a step number ("Action 2:"). A line holding only
//     the label word (possibly decorated, no colon) is a label whose value
//     starts on the next line. A label counts only at the start of a line:
//     "Action:" inside prose, inside a code fence, or inside a final answer
//     is content. "Action Input:" may also follow the action name on the
//     Action line ("Action: search, Action Input: cats"). Labels are
//     English only: "思考：" is prose.
//  2. Values. A value starts after the colon, on the same line or the
//     following ones, and ends at the next label line; blank lines between
//     labels are allowed. Only whitespace and blank lines around a value are
//     trimmed: Action Input and Final Answer keep their inner newlines
//     (and "\r\n") exactly.
//  3. Thought. Thought is optional. Text before the first label, a leading
//     <think> block and every Thought value before the action are joined
//     with newlines into Decision.Thought.
//  4. Observation. An Observation label after a complete action ends the
//     reply: everything from it on is Decision.Discarded. An Observation
//     label ends an Action Input even inside a code fence (the provider's
//     stop sequence would have cut the reply there), and no line of an
//     ActionInput ever is an Observation label: the input ends before such a
//     line (in the JSON protocol too, inside a decoded action_input string)
//     and the cut text goes to Discarded, never silently lost. An
//     Observation before any
//     action (a model replaying history) is ignored. A last line that is a
//     bare or partial Observation label ("Obs", "Observ", "Observation:"),
//     stop-sequence residue, is dropped.
//  5. Action versus Final Answer. The one that comes first decides; there
//     is no "both" error. A Final Answer after an action is Discarded (it
//     relies on an observation the model has not seen); labels after a
//     Final Answer are part of the answer, which runs to the end of the
//     reply.
//  6. Several actions. The first action wins; the Action labels after it are
//     counted in Decision.ExtraActionsIgnored and their text is Discarded.
//     An action's input must come before the next Action label: "Action: a"
//     directly followed by "Action: b" is missing_action_input for a.
//  7. Missing Action Input. An action written as a call, tool(args), with
//     balanced parentheses and no Action Input label, splits into the action
//     and the input args (one pair of quotes around the args is removed).
//     An empty "Action Input:" label gives the input "". An action with
//     neither is missing_action_input naming the action; so is an action
//     followed by a Final Answer but no input.
//  8. Action name. The first non-blank line of the Action value, trimmed,
//     with surrounding "**", '*', "__", backticks, quotes and brackets
//     ([], <>, 【】, 「」, 《》) removed repeatedly, and a call suffix "(…)"
//     dropped (with an Action Input label, the label's input wins over the
//     call's args); otherwise verbatim (resolving the tool is the agent's job).
//     None, N/A, null, nil, "no action", 无, 没有, 不需要 and the like mean no
//     action: their Action Input is ignored, a later Final Answer or action
//     still decides, and without one the result is no_action. An Action
//     with no name at all is missing_action.
//  9. Action Input. After trimming: a value that starts with a code fence
//     is the fence's content (text after the closing fence is Discarded; an
//     unclosed fence runs to the end of the value); otherwise a value that
//     starts with '{' or '[' is cut at its balanced end, brackets inside
//     double-quoted strings not counting, and the text after it is
//     Discarded (an unbalanced value is kept verbatim: JSON is never
//     repaired, no key is dropped); otherwise a single-line value loses one
//     matching pair of quotes ("…", '…', “…”, ‘…’) or backtick run around it when
//     no further such quote is inside.
//  10. Wrappers. A leading <think>…</think> block is removed and kept in
//     Thought (an unclosed one takes the whole reply). Then a code fence
//     around the whole reply is unwrapped.
//  11. Normalisation. A BOM, CRLF line ends, NBSP, ideographic and other
//     Unicode spaces, and zero-width characters around labels are ignored
//     for label detection; values keep them, except at their trimmed ends.
//  12. No label at all (bare prose, a plan, code, a question to the user):
//     missing_action. Such a reply is never taken as a final answer.
//
// Errors carry the 1-based Line of the label they concern (the Action line
// for missing_action_input and no_action, the Final Answer line for
// empty_final_answer, the Action Input line for an Action Input without
// Action), or 0 when they concern the whole reply.
//
// # JSON protocol
//
// The reply is one JSON object {"thought", "action", "action_input",
// "final_answer", "give_up"}: bare, in a code fence, or (with
// WithProtocol(JSON)) with prose around it; the first '{' starts the
// object and its balanced end ends it. Keys are matched without regard to
// case, the first occurrence winning. Aliases: "name", "tool" and
// "tool_name" for action; "args", "arguments", "input", "parameters" and
// "tool_input" for action_input; "answer" and "final" for final_answer.
// The action may also be an object {"name", "args"}. An action_input
// string is the input as is; any other value is kept as its compact JSON
// text (null is ""). When action and final_answer are both set, the
// action wins. "give_up" (a reason string, or true with a "reason" field)
// gives KindGiveUp when there is no action and no final answer. An object
// that does not decode is invalid_json; the other codes mean what they
// mean for the text protocol. Text after the object (without the closing
// fence of a fenced object) is Discarded, and each further object in it
// that names an action counts in ExtraActionsIgnored: one decision per
// reply, and the trace shows what was dropped.
//
// With Auto (the default) the JSON protocol is used when the reply, after
// removing a <think> block and unwrapping a code fence, starts with '{'.
//
// # Native tool calls
//
// DecideCalls reads the message shape of the OpenAI chat-completions API,
// which OpenAI-compatible providers (GLM, DeepSeek, …) share: an assistant
// message {"role": "assistant", "content": …, "tool_calls": [{"id",
// "type": "function", "function": {"name", "arguments"}}]}, whose
// "arguments" is a string holding JSON text as the model wrote it (so it
// may be invalid). The caller lifts each element of "tool_calls" into a
// Call; a null content is "". Each rule below is pinned by golden
// fixtures named after it (fixtures/parser-native/nNN-*.message.json).
//
//  1. Content. A leading <think>…</think> block is removed and kept in
//     Thought by the same code as rule 10 (an unclosed one takes the whole
//     content); the rest is trimmed. No other rule of the text protocol
//     applies: labels, code fences and Observation lines are content.
//  2. No calls. The trimmed content is the final answer (KindFinal,
//     Thought the <think> block). Content that is empty, blank or only a
//     <think> block is empty_reply.
//  3. Calls. With one call or more the decision is KindToolCalls and
//     Decision.Calls holds every call, in the order given: none is dropped,
//     merged or reordered, and duplicates stay (parallel calls are all the
//     agent's to run). Thought is the <think> block and the trimmed content
//     beside the calls, joined with a newline; content beside calls is never
//     a final answer.
//  4. Checks. Each call is checked on its own; a call that fails a check
//     carries Err (one error per call, the name checked first) and keeps its
//     Arguments verbatim, and the other calls are unaffected. The agent
//     answers such a call with an error tool message and still runs the
//     valid ones.
//  5. Names and ids. The name is kept exactly as sent; an empty or blank
//     name is missing_action. The id is kept as sent; an empty id is not an
//     error.
//  6. Arguments. They must be one JSON object (RFC 8259, whitespace around
//     it allowed) and are compacted: whitespace outside strings is removed,
//     strings, key order and duplicate keys stay byte for byte. Text that is
//     not valid JSON, the empty string included, is invalid_json with the
//     decoder's reason; valid JSON that is not an object (an array, a
//     string, a number, a boolean, null) is invalid_arguments naming what it
//     is.
//
// The returned error (only empty_reply) and the Err of each call have Line
// 0.
package parser
