// Package alertrelay forwards Alertmanager's webhook notifications to chat
// robots that cannot take them as they are: the DingTalk custom robot and
// the WeCom (WeChat Work) group robot. Each notification becomes one
// markdown message, cut to the robot's size limit with a note of what was
// left out. The robots' URLs and the DingTalk signing secret are read from
// files on every request, so a rotated Kubernetes Secret takes effect
// without a restart, and they never appear in logs, replies or errors.
//
// The relay answers Alertmanager 200 once the robot accepted the message,
// 5xx when the robot refused it or could not be reached (Alertmanager then
// retries), and 4xx for a payload it cannot read (a retry would not help).
package alertrelay
