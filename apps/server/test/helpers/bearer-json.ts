// A JSON request with a bearer token, for what drives a server from outside the tests' API helper
// (benchmarks, the soak's crash trials, the fleet test): one way to send it, two ways to read it.

/** Sends `body` (when given) as JSON to `path` on `baseUrl` with `token` as the bearer. */
export function sendJson(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(new URL(path, baseUrl), {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
}

/** The parsed answer of a request that must succeed; any other status throws with its body. */
export async function okJson<T>(...request: Parameters<typeof sendJson>): Promise<T> {
  const [, , method, path] = request;
  const response = await sendJson(...request);
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}
