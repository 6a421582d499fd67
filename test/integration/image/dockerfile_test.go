//go:build integration

package image

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/backfill-dev/backfill/test/framework"
)

// instruction is one Dockerfile instruction, its continuation lines
// joined.
type instruction struct {
	keyword string
	args    string
	line    int
}

// stage is what a build stage declares, build arguments substituted.
type stage struct {
	from, name string
	args       map[string]string
	copies     []copyInstruction
	runs       []string
	user       string
	workdir    string
	env        []string
	entrypoint []string
	labels     map[string]string
}

// copyInstruction is a COPY with its flags.
type copyInstruction struct {
	from, chown, chmod string
	sources            []string
	dest               string
}

// readDockerfile parses the repository's Dockerfile with buildArgs as
// `docker build --build-arg` would pass them.
func readDockerfile(buildArgs map[string]string) ([]*stage, error) {
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "Dockerfile"))
	if err != nil {
		return nil, err
	}
	return evaluate(parseInstructions(string(data)), buildArgs)
}

// parseInstructions splits a Dockerfile into instructions: comments and
// blank lines dropped, lines ending in a backslash joined to the next.
func parseInstructions(text string) []instruction {
	var out []instruction
	var pending strings.Builder
	start := 0
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if pending.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, `\`) {
			pending.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		pending.WriteString(trimmed)
		keyword, args, _ := strings.Cut(pending.String(), " ")
		out = append(out, instruction{keyword: strings.ToUpper(keyword), args: strings.TrimSpace(args), line: start})
		pending.Reset()
	}
	return out
}

// evaluate runs the instructions the final image's config depends on.
func evaluate(instructions []instruction, buildArgs map[string]string) ([]*stage, error) {
	globals := map[string]string{}
	var stages []*stage
	for _, in := range instructions {
		var cur *stage
		if len(stages) > 0 {
			cur = stages[len(stages)-1]
		}
		if in.keyword != "FROM" && in.keyword != "ARG" && cur == nil {
			return nil, fmt.Errorf("line %d: %s before the first FROM", in.line, in.keyword)
		}
		var err error
		switch in.keyword {
		case "ARG":
			name, def, hasDefault := strings.Cut(in.args, "=")
			value, given := buildArgs[name]
			if cur == nil {
				if !given {
					value = unquote(def)
				}
				globals[name] = value
				break
			}
			if !given {
				value = globals[name]
				if hasDefault {
					value = substitute(unquote(def), cur.args)
				}
			}
			cur.args[name] = value
		case "FROM":
			words := strings.Fields(substitute(in.args, globals))
			s := &stage{from: words[0], args: map[string]string{}, labels: map[string]string{}}
			if len(words) == 3 && strings.EqualFold(words[1], "AS") {
				s.name = words[2]
			} else if len(words) != 1 {
				return nil, fmt.Errorf("line %d: FROM %s: want IMAGE [AS NAME]", in.line, in.args)
			}
			stages = append(stages, s)
		case "COPY":
			err = cur.addCopy(words(substitute(in.args, cur.args)))
		case "RUN":
			cur.runs = append(cur.runs, substitute(in.args, cur.args))
		case "USER":
			cur.user = substitute(in.args, cur.args)
		case "WORKDIR":
			cur.workdir = substitute(in.args, cur.args)
		case "ENV":
			cur.env = append(cur.env, substitute(in.args, cur.args))
		case "LABEL":
			for _, pair := range words(substitute(in.args, cur.args)) {
				key, value, ok := strings.Cut(pair, "=")
				if !ok {
					return nil, fmt.Errorf("line %d: LABEL %q is not key=value", in.line, pair)
				}
				cur.labels[key] = value
			}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &cur.entrypoint); err != nil {
				return nil, fmt.Errorf("line %d: ENTRYPOINT must be the exec form, a JSON array: %w", in.line, err)
			}
		default:
			return nil, fmt.Errorf("line %d: %s is an instruction this parser does not know", in.line, in.keyword)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", in.line, err)
		}
	}
	return stages, nil
}

func (s *stage) addCopy(args []string) error {
	var c copyInstruction
	for len(args) > 0 && strings.HasPrefix(args[0], "--") {
		flag, value, _ := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
		switch flag {
		case "from":
			c.from = value
		case "chown":
			c.chown = value
		case "chmod":
			c.chmod = value
		default:
			return fmt.Errorf("COPY --%s is a flag this parser does not know", flag)
		}
		args = args[1:]
	}
	if len(args) < 2 {
		return fmt.Errorf("COPY %q: want sources and a destination", args)
	}
	c.sources, c.dest = args[:len(args)-1], args[len(args)-1]
	s.copies = append(s.copies, c)
	return nil
}

// argReference is $NAME or ${NAME}.
var argReference = regexp.MustCompile(`\$(?:\{(\w+)\}|(\w+))`)

// substitute replaces build arguments; one not declared is empty, as in
// Docker.
func substitute(s string, args map[string]string) string {
	return argReference.ReplaceAllStringFunc(s, func(ref string) string {
		m := argReference.FindStringSubmatch(ref)
		return args[m[1]+m[2]]
	})
}

// words splits on spaces outside double quotes and drops the quotes.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case unicode.IsSpace(r) && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

func unquote(s string) string { return strings.Trim(s, `"`) }
