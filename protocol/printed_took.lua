-- printed_took: a consumer of the printed record has taken every entry up to <id> (protocol/printed.py): its cursor
-- moves there, and what every consumer has taken leaves the record.
-- flags: allow-oom
-- KEYS printed:consumers printed
-- ARGV <consumer> <id>
-- Returns 1 when its cursor moved, 0 when not (not registered, or <id> not after its cursor).
return printed_took(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
