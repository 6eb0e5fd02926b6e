import { openApiDocument } from "./src/http/openApiDocument.ts"
const doc = openApiDocument() as any
const s = JSON.stringify(doc.paths["/api/v1/public/campaigns"])
console.log([...new Set([...s.matchAll(/"\$ref":"([^"]+)"/g)].map(m=>m[1]))].join("\n"))
const u = doc.components.schemas
console.log(Object.keys(u).filter(k=>/unknown/i.test(k)), JSON.stringify(u.unknown ?? u.Unknown))
const p = JSON.stringify(doc.paths["/api/v1/public/campaigns"].post.requestBody)
console.log(p.match(/.{80}\/schemas\/unknown.{80}/g)?.slice(0,3))
const q = JSON.stringify(doc.paths["/api/v1/public/templates/{id}"])
console.log((q.match(/\/schemas\/unknown/g) ?? []).length)
