import { Duration } from "effect"

/** Sends of a gateway failure (category `gateway`), the first included, before the message fails. */
export const MAX_SEND_ATTEMPTS = 5

/** Backoff before attempt n+1 after gateway failure n: 250 ms, 500 ms, 1 s, 2 s. */
export const retryDelay = (attempt: number) => Duration.millis(250 * 2 ** (attempt - 1))

/** Every backoff of one send added up: how much longer than its sends a send may take. */
export const retriesTotalMs = Array.from({ length: MAX_SEND_ATTEMPTS - 1 }, (_, i) => Duration.toMillis(retryDelay(i + 1))).reduce((a, b) => a + b, 0)
