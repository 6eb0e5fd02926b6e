// Test only: loaded with `node --import` before a Herald node (never by Herald itself), it blocks
// the process's event loop for HERALD_TEST_LAG_BLOCK_MS, lets it run for HERALD_TEST_LAG_FREE_MS,
// and so on, as a node busy with other work would be: timers, sockets and fibers all run late by
// up to the block.
const block = Number(process.env.HERALD_TEST_LAG_BLOCK_MS ?? "300")
const free = Number(process.env.HERALD_TEST_LAG_FREE_MS ?? "100")

// Asleep rather than busy, so that a test's lagging nodes do not take the machine's cores.
const cell = new Int32Array(new SharedArrayBuffer(4))

const lag = () => {
  Atomics.wait(cell, 0, 0, block)
  setTimeout(lag, free).unref()
}
setTimeout(lag, free).unref()
