// The same real server on the same embedded database as the server's own tests.
export { serverGlobalSetup as default } from "@deskline/test-kit";
