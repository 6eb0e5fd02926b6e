import { hash, verify } from "@node-rs/argon2"
import { Effect, Redacted } from "effect"

// OWASP's argon2id baseline (m=19 MiB, t=2, p=1): about 20 ms here, on the libuv pool.
const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

/** argon2id hashing; @node-rs/argon2 runs off the event loop and compares in constant time. */
export class Passwords extends Effect.Service<Passwords>()("herald/Passwords", {
  succeed: {
    hash: (password: Redacted.Redacted<string> | string) =>
      Effect.promise(() => hash(typeof password === "string" ? password : Redacted.value(password), OPTIONS)).pipe(
        Effect.withSpan("Passwords.hash")
      ),
    verify: (passwordHash: string, password: Redacted.Redacted<string> | string) =>
      Effect.promise(() =>
        verify(passwordHash, typeof password === "string" ? password : Redacted.value(password)).catch(() => false)
      ).pipe(Effect.withSpan("Passwords.verify"))
  }
}) {}
