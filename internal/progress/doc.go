// Package progress is training progress as the training code reports it:
// the report it POSTs (step, epoch, a durable checkpoint), the store that
// keeps each job's latest until the TFJob controller writes it into the
// job's status, and the goodput account of the job's time.
package progress
