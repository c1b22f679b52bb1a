import type { Router, RouterMiddleware } from "@koa/router";
import { AppError, routeNotFound } from "../errors.js";

/**
 * A method the path does not have is `405 method_not_allowed` with `Allow` listing the ones it has
 * (RFC 9110 §15.5.6 requires the header), whether the router knows the method (PUT on a list) or
 * not (TRACE, QUERY), and on every path: the API's, the probes, the docs and the spec documents.
 * The router works out `Allow` (and answers OPTIONS); this turns its bare 405/501 into our error.
 */
export function allowedMethods(router: Router): RouterMiddleware {
  const answer = router.allowedMethods();
  return async (ctx, next) => {
    await answer(ctx, next);
    if ((ctx.status !== 405 && ctx.status !== 501) || ctx.body !== undefined) return;
    const allow = ctx.response.get("Allow");
    if (allow === "") {
      // An unknown method on an unknown path: the path is what is wrong.
      ctx.remove("Allow");
      throw routeNotFound(ctx.method, ctx.path);
    }
    throw new AppError(
      405,
      "method_not_allowed",
      `${ctx.method} is not allowed on ${ctx.path}; it allows ${allow}.`,
      { headers: { Allow: allow } },
    );
  };
}
