package core

// TickBatch is how many due questions one Tick handles (tickBatch).
const TickBatch = tickBatch
