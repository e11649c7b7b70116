package protocol

// Job status codes of php-resque (Resque_Job_Status), kept in
// job:<id>:status as {"status":<code>,"updated":<unix>,"started":<unix>}.
const (
	PHPStatusWaiting  = 1
	PHPStatusRunning  = 2
	PHPStatusFailed   = 3
	PHPStatusComplete = 4
)

// resque-v3 status strings, kept in job:<id>:status as
// {"status":"<s>","updated":<unix>} for payloads with "isMonitored":true.
const (
	V3StatusWaiting  = "waiting"
	V3StatusRunning  = "running"
	V3StatusFinished = "finished"
	V3StatusRetried  = "retried"
	V3StatusFailed   = "failed"
)

// FinishedJobStatus is the status a finished job's status key gets
// (docs/protocol.md#job-status), in the form jobpath/finish.lua takes: "v3:<status>" when the
// payload asked for monitoring (resque-v3), "php:<code>" when it has an id
// (php-resque; applied only where the producer created the key), "" when
// the job has no id. outcome is ok, fail, retry, reschedule or discard.
//
// A php-resque retry keeps the job's id, so the status the producer reads
// goes back to waiting and ends with the final outcome; resque-v3 gives a
// retry a new id, marking the old one retried.
func FinishedJobStatus(p *Payload, outcome string) string {
	if p == nil || p.ID == "" {
		return ""
	}
	if p.IsMonitored {
		switch outcome {
		case "fail":
			return "v3:" + V3StatusFailed
		case "retry":
			return "v3:" + V3StatusRetried
		case "reschedule":
			return "v3:" + V3StatusWaiting
		}
		return "v3:" + V3StatusFinished
	}
	switch outcome {
	case "fail":
		return "php:3"
	case "retry", "reschedule":
		return "php:1"
	}
	return "php:4"
}
