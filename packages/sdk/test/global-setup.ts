// The same real server on the same embedded database as the server's own tests.
export { default } from "../../../apps/server/test/global-setup.js";
