import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import { describe, expect, it } from "vitest";
import { trustedCertificates } from "../src/webhooks/delivery/http-client.js";
import { testCertificate } from "./helpers/test-certificate.js";

// What deliveries trust is handed to one secure context per worker, which parses every entry: each
// certificate once, none lost, and a file of another form kept as it was read.

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const normal = (pem: string) => pem.replace(/\s+/g, "");
const certificatesIn = (pems: string[]) => pems.flatMap((pem) => pem.match(PEM) ?? []).map(normal);

function fileWith(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "deskline-ca-")), "ca.pem");
  writeFileSync(file, text);
  return file;
}

describe("the certificates deliveries trust", () => {
  it("hold each certificate once: Node's roots, the system store and NODE_EXTRA_CA_CERTS's", () => {
    const extra = readFileSync(testCertificate().certFile, "utf8");
    // The extra file repeats one of Node's roots as well: it is listed once.
    const trusted = trustedCertificates(fileWith(`${extra}\n${tls.rootCertificates[0]}\n`));
    const listed = certificatesIn(trusted);
    expect(listed).toHaveLength(trusted.length);
    expect(new Set(listed).size).toBe(listed.length);
    for (const wanted of [...tls.rootCertificates, extra]) expect(listed).toContain(normal(wanted));
  });

  it("can still build the context that trusts the test receivers", () => {
    const trusted = trustedCertificates(testCertificate().certFile);
    expect(() => tls.createSecureContext({ ca: trusted })).not.toThrow();
  });

  it("keep a file holding more than plain certificates whole", () => {
    const trustedForm = "-----BEGIN TRUSTED CERTIFICATE-----\nMIIB\n-----END TRUSTED CERTIFICATE-----\n";
    const text = `${readFileSync(testCertificate().certFile, "utf8")}${trustedForm}`;
    expect(trustedCertificates(fileWith(text))).toContain(text);
  });
});
