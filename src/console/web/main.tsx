// The console's entry: its styles (emitted by esbuild as app.css), link interception, and the app
// rendered into the page's #app.
import "./console.css"
import { render } from "preact"
import { App } from "./app.tsx"
import { interceptLinks } from "./router.tsx"

if (document.documentElement.lang === "") document.documentElement.lang = "en"
interceptLinks()
const root = document.getElementById("app")
if (root !== null) render(<App />, root)
