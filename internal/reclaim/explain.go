package reclaim

import (
	"encoding/json"
	"fmt"
)

// ExplanationAnnotation on a node holds, as JSON, the Explanation of its
// published reclaimed capacity: every input of the formula at the last
// change, the state (Fresh or Stale) and the cool-down. The controller
// writes it with the capacity, when the state changes or a cool-down
// starts, never for input drift alone; `backfill describe node` reads it.
const ExplanationAnnotation = "backfill.dev/reclaim"

// ReadExplanation parses a node's ExplanationAnnotation; ok is false when
// the node has none.
func ReadExplanation(annotations map[string]string) (e Explanation, ok bool, err error) {
	v, ok := annotations[ExplanationAnnotation]
	if !ok {
		return Explanation{}, false, nil
	}
	if err := json.Unmarshal([]byte(v), &e); err != nil {
		return Explanation{}, true, fmt.Errorf("annotation %s: %w", ExplanationAnnotation, err)
	}
	return e, true, nil
}

// annotation is e as the value of ExplanationAnnotation.
func (e Explanation) annotation() string {
	data, err := json.Marshal(e)
	if err != nil {
		panic(fmt.Sprintf("marshalling an explanation: %v", err)) // plain data
	}
	return string(data)
}
