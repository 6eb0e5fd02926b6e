import { Effect } from "effect"
import type { Connection } from "./config.ts"
import { AnswerFailed } from "./exitCodes.ts"
import { type Answer, answerJson, isSuccess } from "./http.ts"
import { printPretty, writeStdout } from "./output.ts"
import { printUpgradePrompt } from "./upgrade.ts"

/**
 * Prints an answer on stdout: its JSON pretty-printed (coloured on a terminal), anything else as it
 * came. A non-2xx answer then fails with AnswerFailed (exit 1), after the upgrade prompt on stderr
 * for 402 and 403.
 */
export const reportAnswer = (connection: Connection, answer: Answer) =>
  Effect.gen(function*() {
    const json = answerJson(answer)
    if (json !== undefined) yield* printPretty(json)
    else if (answer.body.length > 0) yield* writeStdout(answer.body)
    if (isSuccess(answer.status)) return
    if (answer.status === 402 || answer.status === 403) yield* printUpgradePrompt(connection)
    const code = typeof json === "object" && json !== null && "code" in json ? String(json.code) : `http_${answer.status}`
    return yield* new AnswerFailed({ status: answer.status, answerCode: code, message: `the server answered ${answer.status}`, printed: true })
  })
