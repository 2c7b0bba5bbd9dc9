-- Neovim (0.7 and later) starts `lisp-read-file lsp` on fixtures/lsp/project, opens
-- src/render.lisp, puts the cursor on `square` and jumps to its definition through the
-- client (textDocument/definition, then the client's own jump). Prints
-- `JUMPED <file>:<line>` on stdout; exits non-zero on any failure.
local function fail(message)
  io.stdout:write("FAILED " .. message .. "\n")
  vim.cmd("cquit 1")
end

local ok, err = pcall(function()
  local bin, root = os.getenv("LRF_BIN"), os.getenv("LRF_ROOT")
  vim.cmd("edit " .. root .. "/src/render.lisp")
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = "lisp-read-file",
    cmd = { bin, "lsp" },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = "project" } },
  })
  if not id then return fail("the client did not start") end
  vim.lsp.buf_attach_client(buf, id)
  local ready = vim.wait(20000, function()
    local client = vim.lsp.get_client_by_id(id)
    return client ~= nil and client.initialized
  end, 50)
  if not ready then return fail("the server did not initialize") end
  local line = vim.api.nvim_buf_get_lines(buf, 4, 5, false)[1]
  local column = line:find("(square", 1, true)
  vim.api.nvim_win_set_cursor(0, { 5, column + 1 })
  local params = vim.lsp.util.make_position_params()
  local answers = vim.lsp.buf_request_sync(buf, "textDocument/definition", params, 20000)
  local location
  for _, answer in pairs(answers or {}) do
    if answer.result and answer.result[1] then location = answer.result[1] end
  end
  if not location then return fail("no definition") end
  vim.lsp.util.jump_to_location(location, "utf-16")
  local name = vim.api.nvim_buf_get_name(0)
  io.stdout:write("JUMPED " .. name .. ":" .. vim.api.nvim_win_get_cursor(0)[1] .. "\n")
  vim.lsp.stop_client(id)
  vim.cmd("qall!")
end)
if not ok then fail(tostring(err)) end
