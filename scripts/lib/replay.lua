-- Plays a file of requests through wrk, each line once: "METHOD PATH TOKEN [BODY]" (TOKEN "-"
-- for none). Lines are dealt round-robin to wrk's threads. With a capture prefix, every
-- answer's status and body go to <prefix>-<thread>, one line each, for the next step's input.
-- A thread that runs out of lines stops; scripts/bench-http checks that none did.
-- Usage: wrk -s replay.lua URL -- LINES_FILE THREADS [CAPTURE_PREFIX]
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end

function init(args)
    local threads = tonumber(args[2])
    lines = {}
    local index = 0
    for line in io.lines(args[1]) do
        if index % threads == id - 1 then lines[#lines + 1] = line end
        index = index + 1
    end
    position = 0
    if args[3] then out = io.open(args[3] .. "-" .. id, "w") end
end

function request()
    position = position + 1
    local line = lines[position]
    if line == nil then
        if out then out:write("EXHAUSTED\n"); out:flush() end
        wrk.thread:stop()
        return wrk.format("GET", "/healthz")
    end
    local method, path, token, body = line:match("^(%S+) (%S+) (%S+) ?(.*)$")
    local headers = { ["Content-Type"] = "application/json" }
    if token ~= "-" then headers["Authorization"] = "Bearer " .. token end
    if body == "" then body = nil end
    return wrk.format(method, path, headers, body)
end

function response(status, headers, body)
    if out then out:write(status .. " " .. string.gsub(body, "\n", "") .. "\n") end
end
