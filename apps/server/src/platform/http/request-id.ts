import type { Context, Next } from "koa";
import { newId } from "../ids.js";

/** Every response carries `Request-Id`; error bodies and log lines repeat it. */
export async function requestId(ctx: Context, next: Next): Promise<void> {
  const id = newId("req");
  ctx.state.requestId = id;
  ctx.set("Request-Id", id);
  await next();
}
