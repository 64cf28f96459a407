SELECT RELEASE_LOCK(CONCAT('jobctl migrate ', SHA1(DATABASE()))) AS released
