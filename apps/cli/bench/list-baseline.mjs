// The baseline: the list endpoint's own page rate, GET /open/v1/contacts?limit=100 page after
// page (the only way a cursor list can be read), with bare undici (no CLI, no SDK, no output),
// in a process of its own as the export is. Prints {"items", "pages", "seconds"}.
import { Agent, request } from "undici";

const [baseUrl, key] = process.argv.slice(2);
const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
let items = 0;
let pages = 0;
let after;
const started = performance.now();
for (;;) {
  const query = new URLSearchParams({ limit: "100", ...(after ? { starting_after: after } : {}) });
  const response = await request(`${baseUrl}/open/v1/contacts?${query}`, {
    dispatcher,
    headers: { authorization: `Bearer ${key}` },
  });
  const page = await response.body.json();
  if (response.statusCode !== 200) throw new Error(`baseline list answered ${response.statusCode}`);
  items += page.data.length;
  pages++;
  if (!page.has_more) break;
  after = page.data.at(-1).id;
}
console.log(JSON.stringify({ items, pages, seconds: (performance.now() - started) / 1000 }));
await dispatcher.close();
