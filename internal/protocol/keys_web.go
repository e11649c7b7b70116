package protocol

// WebAudit is the dashboard's audit log: a list of JSON entries (who did
// what, when, to how many), newest first, capped by its writer.
func (k Keys) WebAudit() string { return k.key("resque-go", "web", "audit") }
