-- Each profile's card (the card object of API.md: the profile without created_at) is rendered
-- once, when the profile changes, and stored beside it. List pages (mates, mate requests,
-- walks: up to 100 cards each) then copy one text cell per card instead of reading nine
-- columns and writing JSON for each.
--
-- profile_card() is the one rendering in SQL: the profiles projector, the in-SQL rebuild and
-- this migration call it. Its bytes equal the gateway's own rendering of a card (same member
-- order, no spaces, the same escapes for the text FreeText lets in); a test compares them.
CREATE FUNCTION profile_card(user_id uuid, nickname text, dog_name text, age int, sex text, neutered bool, size text,
                             keywords text[], profile_image text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT '{"user_id":"' || user_id::text || '","nickname":' || to_json(nickname)::text
        || ',"dog_name":' || to_json(dog_name)::text || ',"age":' || age::text || ',"sex":' || to_json(sex)::text
        || ',"neutered":' || CASE WHEN neutered THEN 'true' ELSE 'false' END || ',"size":' || to_json(size)::text
        || ',"keywords":' || to_json(coalesce(keywords, '{}'))::text
        || ',"profile_image":' || coalesce(to_json(profile_image)::text, 'null') || '}'
$$;

ALTER TABLE profiles ADD COLUMN card text;
UPDATE profiles SET card = profile_card(user_id, nickname, dog_name, age, sex, neutered, size, keywords, profile_image);
