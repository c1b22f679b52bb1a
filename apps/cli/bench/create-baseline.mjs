// The baseline: the server's own create rate, POST /open/v1/contacts as fast as `concurrency`
// connections allow, with bare undici (no CLI, no SDK, no file), in a process of its own as the
// import is. Prints {"creates", "seconds"}.
import { Agent, request } from "undici";

const [baseUrl, key, countText, concurrencyText, runId] = process.argv.slice(2);
const count = Number(countText);
const dispatcher = new Agent({ connections: null, keepAliveTimeout: 30_000 });
let next = 0;
const started = performance.now();
async function worker() {
  while (next < count) {
    const i = next++;
    const body = JSON.stringify({
      name: `Baseline ${i}`,
      email: `baseline-${runId}-${i}@example.com`,
      tags: ["bench", `t${i % 10}`],
      custom_fields: { plan: i % 2 ? "pro" : "free" },
      external_ids: { crm: `base-${runId}-${i}` },
    });
    const response = await request(`${baseUrl}/open/v1/contacts`, {
      method: "POST",
      dispatcher,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": `b-${runId}-${i}`,
      },
      body,
    });
    await response.body.text();
    if (response.statusCode !== 201) throw new Error(`baseline create answered ${response.statusCode}`);
  }
}
await Promise.all(Array.from({ length: Number(concurrencyText) }, worker));
console.log(JSON.stringify({ creates: count, seconds: (performance.now() - started) / 1000 }));
await dispatcher.close();
