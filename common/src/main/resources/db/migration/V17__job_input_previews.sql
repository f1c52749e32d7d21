-- GET /jobs shows the start of three text fields of each job's input. They were cut from the stored
-- input by every page ((input::jsonb) ->> ...: the whole input parsed three times per row, 584 ms of
-- PostgreSQL for a page of 101 inputs of 512 KiB, issue 31). Previews are data: intake writes them
-- with the job, and a page reads them as columns. Null where the input has no such field.
ALTER TABLE job
    ADD COLUMN input_prompt_preview     text,
    ADD COLUMN input_repository_preview text,
    ADD COLUMN input_base_ref_preview   text;

-- Existing jobs, once: the same 200 characters the page cut before. jsonb refuses NUL, which
-- canonical JSON escapes (backslash, u0000), so an input that holds one (stored before intake refused
-- NUL) keeps no preview, as the page showed none.
UPDATE job
   SET input_prompt_preview     = left(parsed ->> 'prompt', 200),
       input_repository_preview = left(parsed ->> 'repository', 200),
       input_base_ref_preview   = left(parsed ->> 'baseRef', 200)
  FROM (SELECT id AS parsed_id, input::jsonb AS parsed FROM job WHERE strpos(input, '\u0000') = 0) AS inputs
 WHERE job.id = inputs.parsed_id;
