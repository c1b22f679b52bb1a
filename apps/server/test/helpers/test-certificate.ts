import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A self-signed certificate for 127.0.0.1 and localhost (openssl), for the tests' HTTPS webhook
 * receivers; the delivering server process trusts it through NODE_EXTRA_CA_CERTS. Free of vitest
 * imports, so a vitest globalSetup (the end-to-end project's) can make one too.
 */

export interface TestCertificate {
  /** PEM files: the certificate (also the CA the server must trust) and its key. */
  certFile: string;
  keyFile: string;
}

let certificate: TestCertificate | undefined;

/** Made once per process (per test file in vitest). */
export function testCertificate(): TestCertificate {
  if (certificate) return certificate;
  const dir = mkdtempSync(join(tmpdir(), "deskline-receiver-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...["-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=deskline test receiver"],
      ...["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
    ],
    { stdio: "ignore" },
  );
  certificate = { certFile, keyFile };
  return certificate;
}
