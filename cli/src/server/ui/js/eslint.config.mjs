// The web view's modules, linted (`.ci/run`): ESLint's recommended rules for browser ES modules.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: globals.browser,
    },
    rules: {
      // A caught error the code goes on without is said in a comment where it is caught.
      "no-unused-vars": ["error", { caughtErrors: "none" }],
    },
  },
];
