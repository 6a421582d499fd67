package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxReportBytes bounds a report's body: a few fields, well under it.
const MaxReportBytes = 1024

// Report is what training code POSTs:
//
//	{"step": 1200, "epoch": 3, "checkpoint": true}
//
// checkpoint true means a checkpoint covering this step is durable now.
type Report struct {
	Step       int64  `json:"step"`
	Epoch      *int64 `json:"epoch,omitempty"`
	Checkpoint bool   `json:"checkpoint,omitempty"`
}

// DecodeReport parses a report strictly: one JSON object of the fields of
// Report, step present and neither step nor epoch negative. The error
// says what is wrong, for the training code's log.
func DecodeReport(body []byte) (Report, error) {
	if len(body) > MaxReportBytes {
		return Report{}, fmt.Errorf("the report is %d bytes, more than %d", len(body), MaxReportBytes)
	}
	var fields struct {
		Step       *int64 `json:"step"`
		Epoch      *int64 `json:"epoch"`
		Checkpoint *bool  `json:"checkpoint"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fields); err != nil {
		return Report{}, fmt.Errorf(`the report is not {"step": <int>, "epoch": <int>, "checkpoint": <bool>}: %w`, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Report{}, errors.New("the report has more than one JSON value")
	}
	switch {
	case fields.Step == nil:
		return Report{}, errors.New(`the report has no "step"`)
	case *fields.Step < 0:
		return Report{}, fmt.Errorf(`"step" is %d: it cannot be negative`, *fields.Step)
	case fields.Epoch != nil && *fields.Epoch < 0:
		return Report{}, fmt.Errorf(`"epoch" is %d: it cannot be negative`, *fields.Epoch)
	}
	r := Report{Step: *fields.Step, Epoch: fields.Epoch}
	if fields.Checkpoint != nil {
		r.Checkpoint = *fields.Checkpoint
	}
	return r, nil
}
