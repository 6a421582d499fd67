package alertrelay

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// fit joins header, as many whole alert blocks as fit, a note of the
// alerts left out (those that did not fit plus alreadyLeftOut) and the
// footer, in at most limit bytes. Blocks are never cut in the middle,
// except a first block too large to fit alone, which is cut at a rune
// boundary: a message with a part of one alert beats none.
func fit(header string, blocks []string, footer string, alreadyLeftOut, limit int) string {
	var b strings.Builder
	b.WriteString(header)
	shown := 0
	for i, block := range blocks {
		// Room for this block plus the note that would follow it.
		rest := len(blocks) - i - 1 + alreadyLeftOut
		if b.Len()+len(block)+len(leftOutNote(rest))+len(footer) > limit {
			break
		}
		b.WriteString(block)
		shown++
	}
	leftOut := len(blocks) - shown + alreadyLeftOut
	note := leftOutNote(leftOut)
	if shown == 0 && len(blocks) > 0 {
		// Not even one alert fits whole: show its beginning.
		note = leftOutNote(leftOut - 1)
		room := limit - b.Len() - len(note) - len(footer) - len(cutMark)
		b.WriteString(cutAtRune(blocks[0], room) + cutMark)
	}
	b.WriteString(note)
	b.WriteString(footer)
	return cutAtRune(b.String(), limit)
}

// cutMark ends an alert block cut short.
const cutMark = "…\n\n"

// leftOutNote says how many alerts the message does not show.
func leftOutNote(n int) string {
	switch {
	case n <= 0:
		return ""
	case n == 1:
		return "**…and 1 more alert not shown (另有 1 条告警未显示)**\n\n"
	default:
		return fmt.Sprintf("**…and %d more alerts not shown (另有 %d 条告警未显示)**\n\n", n, n)
	}
}

// cutAtRune returns the longest prefix of s of at most n bytes that ends
// at a rune boundary.
func cutAtRune(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
