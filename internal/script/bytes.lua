-- bytes.lua (internal/script, BytesLua): strings in byte order. Lua's
-- string < is strcoll, and Redis sets LC_COLLATE from its environment:
-- under C, POSIX and C.UTF-8 that is strcmp (byte order, as ZSETs sort
-- members), under a glibc language locale (en_US.UTF-8...) an order that
-- ignores case or punctuation first. BYTE_ORDER holds when < is byte
-- order (probes that fail under every glibc language locale); bless(x, y)
-- is x < y by bytes whatever the locale.
local BYTE_ORDER = ('B' < 'a') and ('Z' < '_') and ('_' < 'a') and ('-' < '0') and ('a' < 'aa')
  and ('a b' < 'ab') and ('z' < '\195\169') and ('\127' < '\128') and ('\195\169' < '\255')

local function bless(x, y)
  if BYTE_ORDER then return x < y end
  if x == y then return false end
  local n = math.min(#x, #y)
  for i = 1, n do
    local p, q = string.byte(x, i), string.byte(y, i)
    if p ~= q then return p < q end
  end
  return #x < #y
end
