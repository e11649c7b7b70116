// Package uniqueio is the Redis side of package unique: the producer's
// Enqueue, the operator's List, Get and Clear, and the Sweeper that frees
// uids whose holder is gone.
package uniqueio
