/**
 * The console's one HTML page and its security headers. The page is the same for everyone (no
 * session data in it: a link opened from another site arrives without the SameSite=Strict
 * cookie); the script asks for the session once loaded. Nothing inline and nothing from
 * elsewhere: the Content-Security-Policy allows this server only, so the console works offline
 * and an injected script cannot run.
 */

export function consoleCsp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors.length ? frameAncestors.join(" ") : "'none'"}`,
  ].join("; ");
}

/** Headers of every console answer: the CSP, and nothing for a Referer to leak. */
export function consoleHeaders(frameAncestors: readonly string[]): Record<string, string> {
  return {
    "Content-Security-Policy": consoleCsp(frameAncestors),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    // For browsers without CSP frame-ancestors; an allow-list has no X-Frame-Options form.
    ...(frameAncestors.length ? {} : { "X-Frame-Options": "DENY" }),
  };
}

/**
 * The page, naming every module up front (`modulepreload`): the browser fetches them all at once
 * instead of discovering them import by import, three round trips deep. Every address in it (and
 * in its scripts) is relative to the page's own, `…/console/`, so the console works behind a proxy
 * that mounts the server under a path (CONSOLE_PUBLIC_URL with a path).
 */
export function consolePage(modules: readonly string[]): string {
  const preloads = modules.map((name) => `\n    <link rel="modulepreload" href="assets/${name}">`).join("");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Webhook console · Deskline</title>
    <link rel="icon" href="assets/icon.svg">
    <link rel="stylesheet" href="assets/console.css">${preloads}
    <script type="module" src="assets/app.js"></script>
  </head>
  <body>
    <a class="skip" href="#main">Skip to content</a>
    <header class="bar">
      <span class="brand">Deskline webhooks</span>
      <nav aria-label="Console">
        <ul>
          <li><a href="#/endpoints">Endpoints</a></li>
          <li><a href="#/events">Events</a></li>
        </ul>
      </nav>
      <span id="workspace" class="workspace"></span>
    </header>
    <main id="main" tabindex="-1"><p>Loading…</p></main>
    <div id="status" class="visually-hidden" role="status" aria-live="polite"></div>
  </body>
</html>
`;
}
