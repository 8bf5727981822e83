package parser

import (
	"strings"
)

// Option configures Parse.
type Option func(*options)

type options struct {
	protocol Protocol
}

// WithProtocol selects the reply protocol (default Auto). An unknown
// Protocol value is treated as Auto.
func WithProtocol(p Protocol) Option {
	return func(o *options) { o.protocol = p }
}

// Parse turns one model reply into a Decision.
//
// The error, when not nil, is always a *Error whose Code says what is wrong
// and whose Message tells the model the expected format. Parse is pure and
// runs in time and memory linear in len(reply); see the package
// documentation for every rule it applies.
func Parse(reply string, opts ...Option) (Decision, error) {
	o := options{protocol: Auto}
	for _, opt := range opts {
		opt(&o)
	}
	r, ok := prepare(reply)
	if !ok {
		return Decision{}, errEmptyReply(o.protocol == JSON)
	}
	switch o.protocol {
	case JSON:
		return parseJSON(r)
	case Text:
		return parseText(r)
	default:
		if r.a < r.b && reply[r.a] == '{' {
			return parseJSON(r)
		}
		return parseText(r)
	}
}

// region is the part of a reply that holds the decision, after the
// preparation steps of rules 4 and 10.
type region struct {
	s     string // the whole reply
	a, b  int    // bounds of the part to parse
	think string // content of a leading <think> block, trimmed
}

// prepare strips a leading <think> block, a trailing Observation residue and
// a code fence around the whole reply. It reports false for a blank reply.
func prepare(s string) (region, bool) {
	a, b := trimBounds(s, 0, len(s))
	if a == b {
		return region{}, false
	}
	r := region{s: s}
	r.think, r.a, r.b = splitThink(s, a, b)
	r.dropResidue()
	r.unwrapFence()
	r.dropResidue()
	return r, true
}

// splitThink applies the <think> rule (rule 10) to the trimmed part
// s[a:b]: when it starts with a <think> block, it returns the block's
// content trimmed and the trimmed bounds of the text after the block (an
// unclosed block takes everything, leaving an empty rest); otherwise it
// returns "", a, b.
func splitThink(s string, a, b int) (think string, ra, rb int) {
	if !hasWordPrefix(s[:b], a, "<think>") {
		return "", a, b
	}
	start := a + len("<think>")
	if end := strings.Index(s[start:b], "</think>"); end >= 0 {
		think = trim(s[start : start+end])
		a = start + end + len("</think>")
	} else {
		think = trim(s[start:b]) // never closed: all of it is thinking
		a = b
	}
	ra, rb = trimBounds(s, a, b)
	return think, ra, rb
}

// dropResidue removes a last line that is a partial Observation label.
func (r *region) dropResidue() {
	if r.a == r.b {
		return
	}
	start := strings.LastIndexByte(r.s[r.a:r.b], '\n') + 1 + r.a
	if start > r.a && isObservationResidue(trimCR(r.s[start:r.b])) {
		r.a, r.b = trimBounds(r.s, r.a, start)
	}
}

// unwrapFence removes a code fence around the whole region: the first line
// opens a fence and the first line that closes it is the last line.
func (r *region) unwrapFence() {
	s := r.s
	first := lineEnd(s, r.a, r.b)
	f, ok := fenceOpener(trimCR(s[r.a:first]))
	if !ok || first == r.b {
		return
	}
	for pos := first + 1; pos < r.b; {
		end := lineEnd(s, pos, r.b)
		if f.closes(trimCR(s[pos:end])) {
			if end == r.b {
				r.a, r.b = trimBounds(s, first+1, pos)
			}
			return
		}
		pos = end + 1
	}
}

// lineAt returns the 1-based line number of offset off in s.
func lineAt(s string, off int) int {
	return strings.Count(s[:off], "\n") + 1
}

// textParser states.
const (
	stStart  = iota // no action yet
	stAction        // after an Action label, waiting for its input
	stInput         // inside the Action Input value
	stDone          // the action is complete; the rest is discarded
)

// labelEnd is the pseudo-label at the end of the region.
const labelEnd label = -1

// textParser is the one forward scan of the text protocol.
type textParser struct {
	r     region
	s     string
	state int
	fence fence

	// cur is the section being read: its label, where its value starts and
	// whether its text is dropped.
	cur struct {
		label label
		start int
		skip  bool
	}
	// act is the pending Action label.
	act struct {
		labelStart int
		start      int
		name       string
		inline     bool // name and input on one line
	}
	thoughts  []string
	orphanAt  int // Action Input without Action, -1 if none
	noneAt    int // "Action: None", -1 if none
	emptyAt   int // "Action:" without a name, -1 if none
	discardAt int
	// cutInput is the part of the action input from a line that is an
	// Observation label on: never given to the tool, reported as Discarded.
	cutInput string
	d        Decision
}

func parseText(r region) (Decision, error) {
	p := &textParser{r: r, s: r.s, orphanAt: -1, noneAt: -1, emptyAt: -1}
	if r.think != "" {
		p.thoughts = append(p.thoughts, r.think)
	}
	p.cur.start = r.a
	for pos := r.a; pos < r.b; {
		end := lineEnd(p.s, pos, r.b)
		line := trimCR(p.s[pos:end])
		next := end + 1
		if p.fence.char != 0 {
			if p.fence.closes(line) {
				p.fence = fence{}
			} else if p.state == stInput {
				// An Observation ends the input even inside a fence: the
				// provider's stop sequence would have cut it there.
				if l, off := detectLabel(line); l == labelObservation {
					p.fence = fence{}
					if done, err := p.onLabel(l, pos, pos+off); done || err != nil {
						return p.d, err
					}
				}
			}
			pos = next
			continue
		}
		if f, ok := fenceOpener(line); ok {
			p.fence = f
			pos = next
			continue
		}
		if l, off := detectLabel(line); l != labelNone {
			if done, err := p.onLabel(l, pos, pos+off); done || err != nil {
				return p.d, err
			}
			if f, ok := fenceOpener(line[off:]); ok {
				p.fence = f // "Action Input: ```json"
			}
		}
		pos = next
	}
	if _, err := p.onLabel(labelEnd, r.b, r.b); err != nil {
		return Decision{}, err
	}
	return p.finish()
}

// onLabel handles a label line at lineStart whose value starts at
// valueStart. It reports done when the decision is final.
func (p *textParser) onLabel(l label, lineStart, valueStart int) (bool, error) {
	switch p.state {
	case stStart:
		p.closeSection(lineStart)
		return p.open(l, lineStart, valueStart)
	case stAction:
		return p.resolveAction(l, lineStart, valueStart)
	case stInput:
		in, tail := cleanInput(p.s, p.cur.start, lineStart)
		p.d.ActionInput, p.cutInput = cutObservation(in)
		p.discardAt = lineStart
		if tail >= 0 {
			p.discardAt = tail
		}
		p.state = stDone
		if l == labelAction {
			p.d.ExtraActionsIgnored++
		}
	case stDone:
		if l == labelAction {
			p.d.ExtraActionsIgnored++
		}
	}
	return false, nil
}

// closeSection ends the current section before the first action: text
// before any label and Thought values become the thought.
func (p *textParser) closeSection(end int) {
	if p.cur.skip || (p.cur.label != labelNone && p.cur.label != labelThought) {
		return
	}
	if t := trim(p.s[p.cur.start:end]); t != "" {
		p.thoughts = append(p.thoughts, t)
	}
}

// open starts the section of label l before any action.
func (p *textParser) open(l label, lineStart, valueStart int) (bool, error) {
	p.cur.label, p.cur.start, p.cur.skip = l, valueStart, false
	switch l {
	case labelFinal:
		a, b := trimBounds(p.s, valueStart, p.r.b)
		if a == b {
			return true, errEmptyFinalAnswer(lineAt(p.s, lineStart))
		}
		p.d = Decision{Kind: KindFinal, Thought: p.thought(), FinalAnswer: p.s[a:b]}
		return true, nil
	case labelAction:
		p.state = stAction
		p.act.labelStart, p.act.start, p.act.name, p.act.inline = lineStart, valueStart, "", false
		line := p.s[valueStart:lineEnd(p.s, valueStart, p.r.b)]
		if at, vstart := findInlineInput(line); at >= 0 {
			p.act.name = cleanName(strings.TrimRight(line[:at], " \t,;，；*_"))
			p.act.inline = true
			return p.resolveAction(labelInput, lineStart, valueStart+vstart)
		}
	case labelInput:
		if p.orphanAt < 0 {
			p.orphanAt = lineStart
		}
	}
	return false, nil
}

// resolveAction ends the pending Action when label l arrives.
func (p *textParser) resolveAction(l label, lineStart, valueStart int) (bool, error) {
	name := p.act.name
	if !p.act.inline {
		name = cleanName(firstLine(p.s[p.act.start:lineStart]))
	}
	callName, args, isCall := splitCall(name)
	if isCall {
		name = cleanName(callName)
	}
	switch {
	case name == "" || isNoneName(name):
		if name == "" && p.emptyAt < 0 {
			p.emptyAt = p.act.labelStart
		} else if name != "" && p.noneAt < 0 {
			p.noneAt = p.act.labelStart
		}
		p.state = stStart
		if l == labelInput {
			// The input of no action is dropped.
			p.cur.label, p.cur.start, p.cur.skip = labelInput, valueStart, true
			return false, nil
		}
		if l == labelEnd {
			return false, nil
		}
		return p.open(l, lineStart, valueStart)
	case l == labelInput:
		p.d.Action = name
		p.state = stInput
		p.cur.label, p.cur.start, p.cur.skip = labelInput, valueStart, false
	case isCall:
		p.d.Action = name
		p.d.ActionInput, p.cutInput = cutObservation(stripQuotes(args))
		p.discardAt = lineStart
		p.state = stDone
		if l == labelAction {
			p.d.ExtraActionsIgnored++
		}
	default:
		return true, errMissingActionInput(name, lineAt(p.s, p.act.labelStart))
	}
	return false, nil
}

// finish builds the result at the end of the region.
func (p *textParser) finish() (Decision, error) {
	if p.state == stDone {
		p.d.Kind = KindAction
		p.d.Thought = p.thought()
		if p.discardAt < p.r.b {
			p.d.Discarded = trim(p.s[p.discardAt:p.r.b])
		}
		p.d.Discarded = joinDiscarded(p.cutInput, p.d.Discarded)
		return p.d, nil
	}
	switch {
	case p.noneAt >= 0:
		return Decision{}, errNoAction(lineAt(p.s, p.noneAt))
	case p.emptyAt >= 0:
		return Decision{}, errEmptyActionName(lineAt(p.s, p.emptyAt))
	case p.orphanAt >= 0:
		return Decision{}, errInputWithoutAction(lineAt(p.s, p.orphanAt))
	}
	return Decision{}, errMissingAction()
}

func (p *textParser) thought() string {
	switch len(p.thoughts) {
	case 0:
		return ""
	case 1:
		return p.thoughts[0]
	}
	return strings.Join(p.thoughts, "\n")
}

// findInlineInput finds an "Action Input:" label inside the value of an
// Action line ("Action: search Action Input: cats"). It returns the offset
// of the label and of its value, or -1.
func findInlineInput(line string) (int, int) {
	for i := 0; i < len(line); i++ {
		if lower(line[i]) != 'a' || (i > 0 && isASCIIAlnum(line[i-1])) {
			continue
		}
		j, ok := matchWords(line, i, labelWords[0].words)
		if !ok {
			continue
		}
		k := skipDecorated(line, j)
		switch {
		case k < len(line) && line[k] == ':':
			k++
		case strings.HasPrefix(line[k:], "："):
			k += len("：")
		default:
			continue
		}
		return i, skipClosingEmphasis(line, k, i > 0 && strings.ContainsAny(line[i-1:i], "*_"))
	}
	return -1, 0
}
