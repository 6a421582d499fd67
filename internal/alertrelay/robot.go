package alertrelay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Robot delivers a notification to one chat robot.
type Robot interface {
	// Name is the robot's route and metric label: dingtalk or wecom.
	Name() string
	// Check reads the robot's files, as Deliver does.
	Check() error
	// Deliver renders and sends the notification; it returns a
	// *RefusedError when the robot answered but refused it.
	Deliver(ctx context.Context, n *Notification) error
}

// RefusedError is a robot's refusal: an HTTP error status, or a reply
// whose errcode is not 0 (DingTalk's 310000 for a bad signature or a
// missing keyword, 130101 when its rate limit is passed, …).
type RefusedError struct {
	Robot      string
	HTTPStatus int
	ErrCode    int
	ErrMsg     string
}

func (e *RefusedError) Error() string {
	if e.HTTPStatus != http.StatusOK {
		return fmt.Sprintf("the %s robot answered HTTP %d: %s", e.Robot, e.HTTPStatus, e.ErrMsg)
	}
	return fmt.Sprintf("the %s robot refused the message: errcode %d: %s", e.Robot, e.ErrCode, e.ErrMsg)
}

// robotReply is what both robots answer.
type robotReply struct {
	ErrCode *int   `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
}

// postJSON posts body to target and reads the robot's reply. Its errors
// never hold target, whose query carries the robot's token.
func postJSON(ctx context.Context, client *http.Client, robot string, target *url.URL, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding the %s message: %w", robot, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("building the %s request to %s: %w", robot, redact(target), withoutURL(err))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("posting to the %s robot at %s: %w", robot, redact(target), withoutURL(err))
	}
	defer func() { _ = resp.Body.Close() }()
	// Replies are a few bytes; more is not a robot's answer.
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("reading the %s robot's reply from %s: %w", robot, redact(target), withoutURL(err))
	}
	if resp.StatusCode != http.StatusOK {
		return &RefusedError{Robot: robot, HTTPStatus: resp.StatusCode, ErrMsg: snippet(raw)}
	}
	var reply robotReply
	if err := json.Unmarshal(raw, &reply); err != nil || reply.ErrCode == nil {
		return &RefusedError{Robot: robot, HTTPStatus: resp.StatusCode, ErrCode: -1, ErrMsg: "not a robot's reply: " + snippet(raw)}
	}
	if *reply.ErrCode != 0 {
		return &RefusedError{Robot: robot, HTTPStatus: resp.StatusCode, ErrCode: *reply.ErrCode, ErrMsg: reply.ErrMsg}
	}
	return nil
}

// withoutURL drops the request URL that net/http puts in its errors.
func withoutURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// redact is the robot's address without its query (the token) and
// credentials, fit for logs.
func redact(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

func snippet(raw []byte) string {
	const max = 200
	s := string(bytes.TrimSpace(raw))
	if len(s) > max {
		s = cutAtRune(s, max) + "…"
	}
	return s
}
