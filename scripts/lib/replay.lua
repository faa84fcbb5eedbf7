-- Plays a file of requests through wrk, each line once: "METHOD PATH TOKEN [BODY]" (TOKEN "-"
-- for none). Lines are dealt round-robin to wrk's threads. Each thread writes <prefix>-<thread>:
-- with "capture", every answer's status and body, one line each, for the next step's input; a
-- thread that runs out of lines stops and writes EXHAUSTED there (scripts/bench-http checks that
-- none did).
-- Usage: wrk -s replay.lua URL -- LINES_FILE THREADS PREFIX [capture]
--
-- wrk shares the machine with the server and PostgreSQL, so it does as little as it can while
-- measured: every request is formatted in init (before wrk starts its clock), and without
-- "capture" there is no response callback, so wrk parses no headers into Lua (measured on
-- POST /v1/walks: 39 µs of wrk's CPU per request with the callback and formatting on the fly,
-- 21 µs without either, 19 µs for a fixed request without a script).
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end

function init(args)
    local threads = tonumber(args[2])
    requests = {}
    local index = 0
    for line in io.lines(args[1]) do
        if index % threads == id - 1 then
            local method, path, token, body = line:match("^(%S+) (%S+) (%S+) ?(.*)$")
            local headers = { ["Content-Type"] = "application/json" }
            if token ~= "-" then headers["Authorization"] = "Bearer " .. token end
            if body == "" then body = nil end
            requests[#requests + 1] = wrk.format(method, path, headers, body)
        end
        index = index + 1
    end
    position = 0
    out = io.open(args[3] .. "-" .. id, "w")
    if args[4] ~= "capture" then response = nil end
end

function request()
    position = position + 1
    local request = requests[position]
    if request == nil then
        out:write("EXHAUSTED\n")
        out:flush()
        wrk.thread:stop()
        return wrk.format("GET", "/healthz")
    end
    return request
end

function response(status, headers, body)
    out:write(status, " ", (string.gsub(body, "\n", "")), "\n")
end
