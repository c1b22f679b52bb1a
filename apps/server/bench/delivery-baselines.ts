import autocannon from "autocannon";
import { Agent, request } from "undici";
import { startTestServer } from "../test/helpers/server.js";
import type { Bench } from "./delivery-deployment.js";
import { log, ms, seconds } from "./delivery-settings.js";
import { percentile } from "./delivery-stream.js";
import { newRunId } from "./environment.js";

/** What the delivery rows are compared with, measured in the same run. */

/** A bare POST to the receiver, one at a time (keep-alive, as deliveries are): a delivery's floor. */
export async function barePost({ tls, target }: Bench) {
  const agent = new Agent({ connect: { ca: tls.cert } });
  const bare: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t = performance.now();
    const res = await request(target.url, { method: "POST", body: "{}", dispatcher: agent });
    await res.body.dump();
    bare.push(performance.now() - t);
  }
  await agent.close();
  const [bareP50, bareP99] = [percentile(bare, 50), percentile(bare, 99)];
  log(`bare POST to the receiver: p50 ${ms(bareP50)}, p99 ${ms(bareP99)}`);
  return { bareP50, bareP99 };
}

/** The API's own write rate (create contact, autocannon, 16 connections) on this database server. */
export async function apiWriteRate({ database }: Bench) {
  const api = await startTestServer({ mongodbUri: database.uri, databaseName: `bench_api_${newRunId()}` });
  const admin = async (path: string, body: unknown) =>
    (
      await fetch(`${api.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${api.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json();
  const ws = (await admin("/admin/v1/workspaces", { name: "bench" })) as { id: string };
  const keyed = (await admin(`/admin/v1/workspaces/${ws.id}/api-keys`, {
    name: "bench",
    scopes: ["contacts:write"],
  })) as { key: string };
  const writes = await autocannon({
    url: `${api.baseUrl}/open/v1/contacts`,
    method: "POST",
    connections: 16,
    duration: seconds,
    headers: { authorization: `Bearer ${keyed.key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Bench" }),
  });
  await api.stop();
  const apiWritesPerSecond = writes.requests.total / writes.duration;
  log(`API create-contact: ${apiWritesPerSecond.toFixed(0)} writes/s`);
  return { apiWritesPerSecond };
}
