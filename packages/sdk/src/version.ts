// The SDK's version, sent in `User-Agent` and `Deskline-SDK` so the server's logs tell SDK
// releases apart: package.json's, inlined by the bundler, so `changeset version` is all a release
// needs to change.
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
