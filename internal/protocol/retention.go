package protocol

// RetentionLease is the lease of the process that trims failed and retries
// (resque-go's retention): one per namespace trims, the others wait.
func (k Keys) RetentionLease() string { return k.key("resque-go", "retention_lease") }
