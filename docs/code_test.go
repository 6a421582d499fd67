package docs_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// code is a piece of code the docs show: an inline code span of prose, or
// a line of a code block (with its \-continuations).
type code struct {
	line  int
	text  string
	block bool
}

// codeOf finds the code of a Markdown file's lines.
func codeOf(lines []string) []code {
	var out []code
	var fence string         // the open fence, "" outside one
	var para []string        // the prose paragraph being read
	paraStart := 0           // its first line, from 1
	var cont strings.Builder // a code line continued with \
	contStart := 0
	flush := func() {
		out = append(out, spansOf(strings.Join(para, "\n"), paraStart)...)
		para = nil
	}
	endLine := func() {
		if cont.Len() > 0 {
			out = append(out, code{line: contStart, text: strings.TrimSpace(cont.String()), block: true})
			cont.Reset()
		}
	}
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			flush()
			fence = trimmed[:3]
		case fence != "" && strings.HasPrefix(trimmed, fence):
			endLine()
			fence = ""
		case fence != "":
			if cont.Len() == 0 {
				contStart = i + 1
			}
			body, more := strings.CutSuffix(line, "\\")
			cont.WriteString(strings.TrimSpace(body) + " ")
			if !more {
				endLine()
			}
		case trimmed == "":
			flush()
		default:
			if para == nil {
				paraStart = i + 1
			}
			para = append(para, line)
		}
	}
	flush()
	return out
}

// spansOf finds the code spans of a paragraph whose first line is first:
// text between two equal runs of backticks.
func spansOf(p string, first int) []code {
	var out []code
	for i := 0; i < len(p); {
		if p[i] != '`' {
			i++
			continue
		}
		n := 1
		for i+n < len(p) && p[i+n] == '`' {
			n++
		}
		end := closingRun(p, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		text := strings.Join(strings.Fields(p[i+n:end]), " ")
		out = append(out, code{line: first + strings.Count(p[:i], "\n"), text: text})
		i = end + n
	}
	return out
}

// closingRun is where the next run of exactly n backticks from i starts,
// or -1.
func closingRun(p string, i, n int) int {
	for i < len(p) {
		if p[i] != '`' {
			i++
			continue
		}
		m := 1
		for i+m < len(p) && p[i+m] == '`' {
			m++
		}
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

var (
	// invocation starts a command line of backfill, after any prompt, shell
	// keyword and environment variables.
	invocation = regexp.MustCompile(`^(?:\$\s+)?(?:(?:do|then|else|exec|time)\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:kubectl[ -]backfill|go run \./cmd/backfill|(?:\./)?(?:bin/)?backfill)(?:\s+|$)`)
	longFlag   = regexp.MustCompile(`^--([A-Za-z0-9][A-Za-z0-9-]*)(\*?)(?:=|$)`)
	shortFlag  = regexp.MustCompile(`^-([A-Za-z])(?:=|$)`)
	word       = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// flag is a flag as the docs write it: --name, --prefix-* or -n.
type flag struct {
	name   string
	short  bool
	prefix bool // --prefix-* : any flag that starts with name
}

func (f flag) String() string {
	switch {
	case f.short:
		return "-" + f.name
	case f.prefix:
		return "--" + f.name + "*"
	}
	return "--" + f.name
}

// flagsIn finds the flags of a piece of code: its words, split also at a
// synopsis' brackets and alternatives ([-n NS | -A], -A/--all-namespaces),
// that start with - or --, without a value after =.
func flagsIn(text string) []flag {
	var out []flag
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("[]()|,/", r)
	}) {
		if m := longFlag.FindStringSubmatch(w); m != nil {
			out = append(out, flag{name: m[1], prefix: m[2] == "*"})
		} else if m := shortFlag.FindStringSubmatch(w); m != nil {
			out = append(out, flag{name: m[1], short: true})
		}
	}
	return out
}

// checkFlags checks the flags of a piece of code where the docs attribute
// them to backfill (see TestDocsNameWhatExists).
func (n names) checkFlags(c code) []problem {
	if !c.block && strings.HasPrefix(c.text, "-") {
		return n.checkLoneFlags(c)
	}
	var out []problem
	for _, seg := range commands(c.text) {
		loc := invocation.FindStringIndex(seg)
		if loc == nil {
			continue
		}
		for _, msg := range checkCommandLine(n.root, seg[loc[1]:]) {
			out = append(out, problem{c.line, fmt.Sprintf("%s (in %q)", msg, seg)})
		}
	}
	return out
}

// commands splits a line of shell into its commands: at |, ;, &, ( and ),
// outside the [brackets] of a synopsis, up to a # comment.
func commands(line string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range line {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth > 0:
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return append(out, strings.TrimSpace(line[start:i]))
		case strings.ContainsRune("|;&()", r):
			out = append(out, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(line[start:]))
}

// checkCommandLine checks the arguments of a backfill command line: its
// subcommand words, then its flags against that subcommand's.
func checkCommandLine(root *cobra.Command, args string) []string {
	cmd := root
	words := strings.Fields(args)
	for len(words) > 0 {
		sub := subcommand(cmd, words[0])
		if sub == nil {
			break
		}
		cmd, words = sub, words[1:]
	}
	if len(words) > 0 && !cmd.Runnable() && cmd.HasSubCommands() && word.MatchString(words[0]) {
		return []string{fmt.Sprintf("%s has no command %s", cmd.CommandPath(), words[0])}
	}
	var out []string
	for _, f := range flagsIn(args) {
		if !hasFlag(cmd, f) {
			out = append(out, fmt.Sprintf("%s has no flag %s", cmd.CommandPath(), f))
		}
	}
	return out
}

func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if sub.Name() == name || slices.Contains(sub.Aliases, name) {
			return sub
		}
	}
	return nil
}

// hasFlag reports whether cmd has the flag f, its own or inherited.
func hasFlag(cmd *cobra.Command, f flag) bool {
	if f.short {
		return cmd.Flags().ShorthandLookup(f.name) != nil || cmd.InheritedFlags().ShorthandLookup(f.name) != nil
	}
	found := false
	match := func(pf *pflag.Flag) {
		found = found || pf.Name == f.name || f.prefix && strings.HasPrefix(pf.Name, f.name)
	}
	cmd.Flags().VisitAll(match)
	cmd.InheritedFlags().VisitAll(match)
	return found
}

// checkLoneFlags checks a code span of prose that holds only flags: each
// is a flag of some backfill command, or another program's (otherTools).
func (n names) checkLoneFlags(c code) []problem {
	var out []problem
	for _, f := range flagsIn(c.text) {
		if f.short || otherTools[f.name] != "" {
			continue
		}
		found := n.flags[f.name]
		for name := range n.flags {
			found = found || f.prefix && strings.HasPrefix(name, f.name)
		}
		if !found {
			out = append(out, problem{c.line, fmt.Sprintf("flag %s is no flag of any backfill command (if it is another program's, add it to otherTools)", f)})
		}
	}
	return out
}
