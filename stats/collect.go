package stats

import (
	"math"
)

// Worker states.
const (
	StateWorking = "working"
	StateIdle    = "idle"
)

// Add adds o's counts and times to qc.
func (qc *QueueCounters) Add(o *QueueCounters) {
	qc.Dequeued += o.Dequeued
	qc.Processed += o.Processed
	qc.Failed += o.Failed
	qc.Retries += o.Retries
	qc.QueueTimeMs += o.QueueTimeMs
	qc.ProcessingTimeMs += o.ProcessingTimeMs
}

// Averages sets the average queue and processing times from the sums.
func (qc *QueueCounters) Averages() {
	qc.AvgQueueTimeMs = ratio(qc.QueueTimeMs, qc.Dequeued)
	qc.AvgProcessingTimeMs = ratio(qc.ProcessingTimeMs, qc.Processed+qc.Failed+qc.Retries)
}

// ratio is sum/n to the hundredth, 0 when n is not positive.
func ratio(sum, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return math.Round(float64(sum)/float64(n)*100) / 100
}
