-- When the person last sent themselves a test page that reached its road (the profile's test
-- page or a contact method's test): the first-steps card ticks "send yourself a test page".
ALTER TABLE users ADD COLUMN test_page_at BIGINT;
