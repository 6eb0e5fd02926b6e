// A webhook consumer for trying Herald locally: it verifies each request's Standard Webhooks
// signature with WEBHOOK_SECRET (whsec_…), answers 200 at once, and prints one line per event:
// `verified <type> <delivery id>`, or `REFUSED …` when the signature does not match.
//
//   WEBHOOK_SECRET=whsec_… PORT=4000 node examples/webhook-receiver.mjs
//
// Node's standard library only, so it runs from a fresh clone without npm install.
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"

const secret = process.env.WEBHOOK_SECRET ?? ""
if (!secret.startsWith("whsec_")) {
  console.error("set WEBHOOK_SECRET to the endpoint's secret (whsec_…), as POST /api/v1/rcs/webhooks answered it")
  process.exit(2)
}
const key = Buffer.from(secret.slice("whsec_".length), "base64")
const port = Number(process.env.PORT ?? 4000)

/** Whether any `v1,<signature>` of the header is the HMAC of id.timestamp.body under the key. */
const verified = (id, timestamp, body, header) => {
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest()
  return String(header ?? "").split(" ").some((part) => {
    const [version, signature] = part.split(",")
    const given = Buffer.from(signature ?? "", "base64")
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected)
  })
}

createServer((req, res) => {
  let body = ""
  req.setEncoding("utf8")
  req.on("data", (chunk) => (body += chunk))
  req.on("end", () => {
    res.writeHead(200).end()
    const id = req.headers["webhook-id"]
    const timestamp = Number(req.headers["webhook-timestamp"])
    const fresh = Math.abs(Date.now() / 1000 - timestamp) < 300
    if (!fresh || !verified(id, timestamp, body, req.headers["webhook-signature"])) {
      console.log(`REFUSED ${id} (bad or stale signature)`)
      return
    }
    const event = JSON.parse(body)
    console.log(`verified ${event.type} ${id} ${JSON.stringify(event.data ?? {})}`)
  })
}).listen(port, "127.0.0.1", () => console.error(`listening on http://127.0.0.1:${port}`))
