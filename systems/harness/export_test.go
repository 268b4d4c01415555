package harness

// Stalled reports whether client i of h is stalled now.
func Stalled(h *Harness, i int) bool { return h.isStalled(i) }
