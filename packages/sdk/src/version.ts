// The SDK's version, sent in `User-Agent` and `Deskline-SDK` so the server's logs tell SDK
// releases apart. A test keeps it equal to package.json's `version`.
export const VERSION = "0.1.0";
