package cli

import (
	"fmt"
	"strings"
)

// tfjobKinds are the ways kubectl lets a user name the TFJob resource:
// kind, plural, each with its API group.
var tfjobKinds = map[string]bool{"tfjob": true, "tfjobs": true, "tfjob.kubeflow.org": true, "tfjobs.kubeflow.org": true}

// isTFJobKind reports whether word names the TFJob resource, in any case.
func isTFJobKind(word string) bool { return tfjobKinds[strings.ToLower(word)] }

// jobNamesOf reads the arguments of command (get, wait) as kubectl does:
// an optional leading resource (tfjobs), then names, each bare or as
// tfjob/NAME (what -o name prints). A name of another resource is refused.
func jobNamesOf(command string, args []string) ([]string, error) {
	if len(args) > 0 && isTFJobKind(args[0]) {
		args = args[1:]
	}
	names := make([]string, 0, len(args))
	for _, arg := range args {
		kind, name, typed := strings.Cut(arg, "/")
		if !typed {
			names = append(names, arg)
			continue
		}
		if !isTFJobKind(kind) || name == "" {
			return nil, usageError{fmt.Errorf("%q: %s takes TFJobs only; name one as JOB or tfjob/JOB (use kubectl for other resources)", arg, command)}
		}
		names = append(names, name)
	}
	return names, nil
}
