/**
 * The HTML of a reference page: an empty <redoc> element that the renderer's bundle fills from
 * the spec URL. No inline script, and a Content-Security-Policy that allows nothing but this
 * server, so a page that tried to reach a CDN would fail loudly in the browser test instead of
 * working only online.
 */

export interface ReferencePage {
  title: string;
  /** Absolute paths on this server (the API's own paths are absolute too: /open/v1/…). */
  specUrl: string;
  scriptUrl: string;
}

/** Redoc styles through styled-components (inline <style>) and searches in a blob: worker. */
export const REFERENCE_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function referencePageHtml({ title, specUrl, scriptUrl }: ReferencePage): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="data:,">
  </head>
  <body style="margin: 0">
    <redoc spec-url="${escapeHtml(specUrl)}"></redoc>
    <script src="${escapeHtml(scriptUrl)}"></script>
  </body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
