// Sign-in with an API token (`rag token create`): kept in this browser (localStorage) and sent
// as `Authorization: Bearer` with every request of the page. Loaded before app.js; a 401 answer
// opens the form. A service without tokens (loopback) never asks for one.
"use strict";

(() => {
  const KEY = "rag-token";
  const plainFetch = window.fetch.bind(window);
  const form = document.createElement("form");
  form.id = "signin";
  form.hidden = true;
  form.innerHTML =
    '<label>API token <input id="signin-token" type="password" autocomplete="off" required></label>' +
    ' <button type="submit">Sign in</button> <span id="signin-status" role="status"></span>';
  const signOut = document.createElement("button");
  signOut.id = "signout";
  signOut.type = "button";
  signOut.textContent = "Sign out";
  signOut.hidden = !localStorage.getItem(KEY);
  document.querySelector("header").append(form, signOut);

  window.fetch = async (input, init = {}) => {
    const token = localStorage.getItem(KEY);
    const headers = new Headers(init.headers || {});
    if (token && !headers.has("Authorization")) headers.set("Authorization", `Bearer ${token}`);
    const response = await plainFetch(input, { ...init, headers });
    if (response.status === 401) {
      form.hidden = false;
      document.getElementById("signin-status").textContent = token ? "the token was refused" : "this service needs a token";
    }
    return response;
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    localStorage.setItem(KEY, document.getElementById("signin-token").value.trim());
    window.location.reload();
  });
  signOut.addEventListener("click", () => {
    localStorage.removeItem(KEY);
    window.location.reload();
  });
})();
